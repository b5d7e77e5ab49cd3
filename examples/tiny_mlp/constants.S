/* The weights, laid out as AOTInductor's _compile_consts emits them for Linux: their own section
   .lrodata (flags "a"; GNU ld puts it in the last PT_LOAD), 64-aligned, between two exported
   symbols. AOTInductor writes the bytes as .byte/.space and patches the object file; .incbin of
   the generated blob gives the same section. TINY_MLP_CONSTANTS is the blob's path. */
	.section	.lrodata, "a"
	.balign 64
	.globl	_binary_constants_bin_start
_binary_constants_bin_start:
	.incbin TINY_MLP_CONSTANTS
	.globl	_binary_constants_bin_end
_binary_constants_bin_end:

	.section	.note.GNU-stack, "", @progbits
