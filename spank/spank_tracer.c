#include "config.h"
#include <stdint.h>
#include <slurm/spank.h>
SPANK_PLUGIN (tracer, 1);
