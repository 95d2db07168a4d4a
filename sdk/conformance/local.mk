# sdk/conformance/local.mk
