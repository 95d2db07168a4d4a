/* plugins/common/setting-checks.h - checks of [settings] values that
 * several providers share, for the check slot of a settings_read table
 * (sbx_setting_v1.check): each returns NULL, or why the value is refused
 * (a static string the core puts after the file, line, key and value).
 */
#ifndef PC_SETTING_CHECKS_H
#define PC_SETTING_CHECKS_H

#include <stdbool.h>

/* Non-empty, of [A-Za-z0-9] and the characters of @extra only. */
bool pc_plain_name(const char *s, const char *extra);

/* An http:// or https:// URL. */
const char *pc_check_http_url(const char *v);

/* An absolute directory other than "/" (trailing slashes aside), without
 * "/.." or "/./", on one line. */
const char *pc_check_workdir(const char *v);

#endif
