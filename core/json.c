/* core/json.c */
