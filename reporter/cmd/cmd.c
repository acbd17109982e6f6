/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the commands share (reporter/cmd/cmd.h). Reporter thread only.
 */
#include "reporter/cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "common/err.h"

int rep_cmd_unknown_option(struct cmn_err *err, const char *cmd, char **argv)
{
    if (optopt != 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: unknown option -%c (see prof %s --help)", cmd,
                           optopt, cmd);
    return cmn_err_set(err, CMN_E_INPUT, "%s: unknown option %s (see prof %s --help)", cmd,
                       argv[optind - 1], cmd);
}

int rep_cmd_open_output(const char *path, FILE **out, struct cmn_err *err)
{
    *out = stdout;
    if (path != NULL && (*out = fopen(path, "w")) == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "%s: %s", path, strerror(errno));
    return CMN_OK;
}

int rep_cmd_close_output(const char *path, FILE *out, int rc, struct cmn_err *err)
{
    if (out != NULL && out != stdout && fclose(out) != 0 && rc == CMN_OK)
        rc = CMN_E_IO;
    if (rc == CMN_E_NOMEM)
        return cmn_err_nomem(err);
    if (rc == CMN_E_IO)
        return cmn_err_set(err, CMN_E_IO, "%s: write error: %s",
                           path != NULL ? path : "standard output", strerror(errno));
    return rc;
}
