/* tests/image/imgcat.c - the one program of the test image of run.sh:
 * prints each file named, or "absent PATH" when it cannot be opened, so
 * that a run shows which root it saw.  Linked statically (the image has
 * no libc) and built without the user's CFLAGS (no sanitizer runtime). */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char buf[4096];
    for (int i = 1; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            printf("absent %s\n", argv[i]);
            continue;
        }
        fflush(stdout);
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            if (write(1, buf, (size_t)n) != n)
                return 1;
        close(fd);
        if (n < 0)
            return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
