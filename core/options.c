/* core/options.c */
