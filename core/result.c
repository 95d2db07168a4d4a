/* core/result.c */
