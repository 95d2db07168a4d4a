/* core/run/artifacts.h - a result's artifacts (core/run/artifacts.c)
 */
#ifndef POLYSANDBOX_RUN_ARTIFACTS_H
#define POLYSANDBOX_RUN_ARTIFACTS_H

#include <polysandbox/sandbox.h>

#include "conf.h"

/* After a run of code whose template @t declares artifacts: add to @r
 * each file of its directory, or why it was left out.  SBX_E_NOMEM only
 * (a listing or read that fails is recorded in @r as left out). */
int core_artifacts_collect(sbx_sandbox *sb, const core_template_conf *t, sbx_result *r);

#endif /* POLYSANDBOX_RUN_ARTIFACTS_H */
