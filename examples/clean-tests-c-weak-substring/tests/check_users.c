/* The check wants the whole labelled line, with a count it computes from the log itself. */
#include <stdio.h>
#include <string.h>

static const char *LOG = "/app/access.log";
static const char *COUNTER = "python3 /app/count_users.py /app/access.log";
static char out[4096];

/* What the command prints on stdout, read whole. */
static const char *run_counter(const char *cmd) {
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    if (p) pclose(p);
    return out;
}

/* How many distinct first words the lines of the file have. */
static int count_users(const char *path) {
    char seen[64][64], line[256], name[64];
    int n = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s", name) != 1) continue;
        int i = 0;
        while (i < n && strcmp(seen[i], name) != 0) i++;
        if (i == n && n < 64) strcpy(seen[n++], name);
    }
    if (f) fclose(f);
    return n;
}

int main(void) {
    char want[64];
    snprintf(want, sizeof want, "users: %d\n", count_users(LOG));
    const char *got = run_counter(COUNTER);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "want %s, got %s\n", want, got);
        return 1;
    }
    return 0;
}
