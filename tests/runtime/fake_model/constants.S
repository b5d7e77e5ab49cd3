/* 64 bytes of "weights" (FAKE_CONSTANTS_BYTES when defined) laid out as AOTInductor lays them out (.lrodata,
   64-aligned, two exported symbols), so mpspack build classifies the library as an embedded-weights model
   library. */
#ifndef FAKE_CONSTANTS_BYTES
#define FAKE_CONSTANTS_BYTES 64
#endif
	.section	.lrodata, "a"
	.balign 64
	.globl	_binary_constants_bin_start
_binary_constants_bin_start:
	.fill	FAKE_CONSTANTS_BYTES, 1, 0x2a
	.globl	_binary_constants_bin_end
_binary_constants_bin_end:

	.section	.note.GNU-stack, "", @progbits
