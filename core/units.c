/* core/units.c */
