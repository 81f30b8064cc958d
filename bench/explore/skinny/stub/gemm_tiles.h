// Stand-in for the generated header (src/gemm/tiles.rs): the skinny kernel's shape only.
#pragma once
#ifndef MYNS_SKINNY_WARPS
#define MYNS_SKINNY_WARPS 8
#endif
#define MYNS_SKINNY_NW 64
#define MYNS_SKINNY_TMA_CW 4
#define MYNS_SKINNY_TMA_STAGES 16
