/*
 * Replay driver: runs LLVMFuzzerTestOneInput on every file named on the
 * command line (directories are read one level deep), so a fuzz corpus and
 * its crash folder run as an ordinary test in any build, sanitizers or not.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return 1;
            }
            buf = nb;
        }
        const size_t n = fread(buf + size, 1, cap - size, f);
        if (n == 0) break;
        size += n;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, size);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    int files = 0, errors = 0;
    for (int a = 1; a < argc; ++a) {
        struct stat sb;
        if (stat(argv[a], &sb) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[a]);
            ++errors;
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            errors += run_file(argv[a]);
            ++files;
            continue;
        }
        DIR *d = opendir(argv[a]);
        if (d == NULL) {
            ++errors;
            continue;
        }
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
            errors += run_file(path);
            ++files;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", files);
    return errors != 0 || files == 0;
}
