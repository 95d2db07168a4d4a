# core/cli/local.mk
