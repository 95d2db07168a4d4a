# tests/cli/local.mk
