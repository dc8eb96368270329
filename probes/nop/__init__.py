"""Why a do-nothing agent passes: the nop probe's causes and their rules."""
