# doc/local.mk
