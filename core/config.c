/* core/config.c */
