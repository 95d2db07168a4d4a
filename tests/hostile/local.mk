# tests/hostile/local.mk
