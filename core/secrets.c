/* core/secrets.c */
