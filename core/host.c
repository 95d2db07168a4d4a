/* core/host.c */
