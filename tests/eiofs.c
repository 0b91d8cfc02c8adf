/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * eiofs: a FUSE file system whose one file fails: /bad (4096 bytes) can
 * be opened, but every read and write of it returns EIO, as a failing
 * disk or server would.  /good reads as 4096 bytes of 'x'.  The tests
 * mount it to see I/O errors in records (this kernel has neither
 * device-mapper nor fault injection).
 *
 *   eiofs MOUNTPOINT [FUSE options]    (runs in the foreground: -f)
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <fuse.h>

#define SIZE 4096

static int fs_getattr (const char *path, struct stat *st,
                       struct fuse_file_info *fi)
{
    (void)fi;
    memset (st, 0, sizeof (*st));
    if (!strcmp (path, "/")) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    if (!strcmp (path, "/bad") || !strcmp (path, "/good")) {
        st->st_mode = S_IFREG | 0666;
        st->st_nlink = 1;
        st->st_size = SIZE;
        return 0;
    }
    return -ENOENT;
}

static int fs_readdir (const char *path, void *buf, fuse_fill_dir_t fill,
                       off_t off, struct fuse_file_info *fi,
                       enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    if (strcmp (path, "/"))
        return -ENOENT;
    fill (buf, ".", NULL, 0, 0);
    fill (buf, "..", NULL, 0, 0);
    fill (buf, "bad", NULL, 0, 0);
    fill (buf, "good", NULL, 0, 0);
    return 0;
}

static int fs_open (const char *path, struct fuse_file_info *fi)
{
    if (strcmp (path, "/bad") && strcmp (path, "/good"))
        return -ENOENT;
    fi->direct_io = 1; /* every read reaches us: no page cache */
    return 0;
}

static int fs_read (const char *path, char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)fi;
    if (!strcmp (path, "/bad"))
        return -EIO;
    if (off >= SIZE)
        return 0;
    if (size > (size_t)(SIZE - off))
        size = (size_t)(SIZE - off);
    memset (buf, 'x', size);
    return (int)size;
}

static int fs_write (const char *path, const char *buf, size_t size,
                     off_t off, struct fuse_file_info *fi)
{
    (void)buf;
    (void)off;
    (void)fi;
    if (!strcmp (path, "/bad"))
        return -EIO;
    return (int)size;
}

static int fs_truncate (const char *path, off_t size,
                        struct fuse_file_info *fi)
{
    (void)path;
    (void)size;
    (void)fi;
    return 0;
}

static const struct fuse_operations ops = {
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .truncate = fs_truncate,
};

int main (int argc, char *argv[])
{
    return fuse_main (argc, argv, &ops, NULL);
}
