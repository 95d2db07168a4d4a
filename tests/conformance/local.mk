# tests/conformance/local.mk
