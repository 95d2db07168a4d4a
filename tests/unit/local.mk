# tests/unit/local.mk
