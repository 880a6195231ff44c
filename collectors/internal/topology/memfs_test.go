package topology

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"sort"
	"testing/fstest"
	"time"
)

// memFS serves a loaded tarball. fstest.MapFS answers every missing file or directory
// lookup by scanning the whole map, which on dumps of 60k entries made the suite crawl;
// memFS indexes directories once and answers ReadFile/ReadDir/Stat from maps.
type memFS struct {
	m      fstest.MapFS
	dirs   map[string][]fs.DirEntry
	prefix string // set on a Sub view ("" at the top)
}

// Sub keeps the fast paths (io/fs's generic sub-FS has no Stat, so it would fall back
// to MapFS.Open).
func (f *memFS) Sub(dir string) (fs.FS, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	return &memFS{m: f.m, dirs: f.dirs, prefix: f.full(dir)}, nil
}

func (f *memFS) full(name string) string {
	if f.prefix == "" {
		return name
	}
	return path.Join(f.prefix, name)
}

func newMemFS(m fstest.MapFS) *memFS {
	f := &memFS{m: m, dirs: map[string][]fs.DirEntry{".": nil}}
	children := map[string]map[string]bool{".": {}}
	var addDir func(d string)
	addDir = func(d string) {
		if _, ok := children[d]; ok {
			return
		}
		children[d] = map[string]bool{}
		parent := path.Dir(d)
		addDir(parent)
		children[parent][path.Base(d)] = true
	}
	for name, e := range m {
		if e.Mode.IsDir() {
			addDir(name)
			continue
		}
		parent := path.Dir(name)
		addDir(parent)
		children[parent][path.Base(name)] = true
	}
	for d, names := range children {
		var list []fs.DirEntry
		for n := range names {
			info, _ := f.Stat(path.Join(d, n))
			if info == nil { // a directory: children is filled, dirs not yet
				info = memInfo{name: n, dir: true}
			}
			list = append(list, fs.FileInfoToDirEntry(info))
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name() < list[j].Name() })
		f.dirs[d] = list
	}
	return f
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

func (f *memFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return f.m.Open(f.full(name))
}

func (f *memFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	name = f.full(name)
	if e, ok := f.m[name]; ok && !e.Mode.IsDir() {
		return slices.Clone(e.Data), nil
	}
	if _, ok := f.dirs[name]; ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (f *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	if d, ok := f.dirs[f.full(name)]; ok {
		return slices.Clone(d), nil
	}
	return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
}

func (f *memFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	full := f.full(name)
	if _, ok := f.dirs[full]; ok {
		return memInfo{name: path.Base(full), dir: true}, nil
	}
	if e, ok := f.m[full]; ok && !e.Mode.IsDir() {
		return memInfo{name: path.Base(full), size: int64(len(e.Data))}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}
