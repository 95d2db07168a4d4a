/* core/loader.c */
