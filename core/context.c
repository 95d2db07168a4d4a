/* core/context.c */
