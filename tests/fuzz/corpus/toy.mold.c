/* toy mold */
int p0 = #P0;
/* #P1 */
int p2 = #P2;
