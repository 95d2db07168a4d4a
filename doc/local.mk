# doc/local.mk - documentation that is not a man page of one program
EXTRA_DIST += doc/plugin-guide.md
EXTRA_DIST += doc/eval-speed.md
EXTRA_DIST += doc/local-measurements.md
EXTRA_DIST += doc/security.md
