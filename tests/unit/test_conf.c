#include "config.h"
#include <stdio.h>
int main (void) { printf ("1..0 # SKIP not written yet\n"); return 0; }
