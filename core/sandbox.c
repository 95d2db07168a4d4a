/* core/sandbox.c */
