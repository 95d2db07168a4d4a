# plugins/local/local.mk
