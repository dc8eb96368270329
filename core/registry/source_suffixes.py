"""The file suffixes of program source: one list, read by the assertion model (a check that reads one of these
from the agent's side reads its source text, not an outcome) and by the mutation probe (a source file it has no
parser for is still code by its name)."""

SOURCE_CODE_SUFFIXES = (
    ".py",
    ".ipynb",
    ".sh",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".rs",
    ".go",
    ".js",
    ".ts",
    ".java",
    ".rb",
    ".pl",
    ".lua",
    ".php",
    ".cs",
    ".kt",
    ".swift",
    ".scala",
    ".hs",
    ".ml",
    ".s",
    ".asm",
    ".sql",
    ".r",
)
