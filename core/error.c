/* core/error.c */
