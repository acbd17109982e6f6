/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the commands share (reporter/cmd/cmd.h). Reporter thread only.
 */
#include "reporter/cmd/cmd.h"

#include <getopt.h>

#include "common/err.h"

int rep_cmd_unknown_option(struct cmn_err *err, const char *cmd, char **argv)
{
    if (optopt != 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: unknown option -%c (see prof --help)", cmd,
                           optopt);
    return cmn_err_set(err, CMN_E_INPUT, "%s: unknown option %s (see prof --help)", cmd,
                       argv[optind - 1]);
}
