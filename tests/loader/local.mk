# tests/loader/local.mk
