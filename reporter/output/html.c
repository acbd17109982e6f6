/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The HTML page around the inline SVG flame graph. The SVG's own script finds the search
 * box by its id (pf-search-input) and then searches as it changes instead of asking with
 * a prompt. Reporter thread.
 */
#include "reporter/output/html.h"

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "reporter/output/escape.h"
#include "reporter/output/svg.h"
#include "reporter/stacks/flame.h"

static const char page_css[] =
    "body { margin: 0; padding: 8px 12px; background: #fdfcf4; font: 14px sans-serif; }\n"
    "#pf-bar { display: flex; gap: 12px; align-items: center; margin-bottom: 4px; }\n"
    "#pf-search-input { font: 13px monospace; width: 28em; padding: 2px 4px; }\n"
    "#pf-hint { color: #666; }\n"
    "svg { display: block; }\n";

int rep_out_html(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                 const struct rep_flame_opts *o)
{
    const char *title = o->title != NULL ? o->title : "Flame graph";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          out);
    rep_escape_xml(out, title, SIZE_MAX);
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_css);
    fputs("<div id=\"pf-bar\"><label for=\"pf-search-input\">Search</label>"
          "<input id=\"pf-search-input\" type=\"search\" autocomplete=\"off\" "
          "placeholder=\"regular expression or text\">"
          "<span id=\"pf-hint\">click a frame to zoom; Esc resets</span></div>\n",
          out);
    rep_out_svg_element(out, f, names, o, true);
    fputs("</body>\n</html>\n", out);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
