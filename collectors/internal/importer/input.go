package importer

// input.go owns reading the input files: gzip sniffing and decompression
// (klauspost/compress), format detection on the first bytes, and cutting the stream
// into chunks of whole lines for the parse workers. It runs in its own goroutine so
// decompression overlaps parsing.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

const (
	sniffSize = 256 << 10
	maxChunk  = 32 << 20
)

// Chunk sizes in bytes; variables so tests can cut small files into many chunks.
var (
	minChunk     int64 = 256 << 10
	initialChunk int64 = 8 << 20
)

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// reader feeds chunks of all files, in order.
type reader struct {
	paths      []string
	want       Format
	bytesRead  atomic.Int64
	chunkBytes atomic.Int64 // target chunk size, tuned by the consumer
	tokens     chan struct{}
	bufs       chan []byte
	infos      []*fileInfo
	warnings   []string
	formatErr  error
	maps       [][]byte // mapped files (mmap_unix.go), unmapped by release
}

// release unmaps the mapped files; call it once no chunk of them is parsed any more.
func (rd *reader) release() {
	for _, m := range rd.maps {
		unmap(m)
	}
	rd.maps = nil
}

func (rd *reader) getBuf(n int) []byte {
	select {
	case b := <-rd.bufs:
		if cap(b) >= n {
			return b[:0]
		}
	default:
	}
	return make([]byte, 0, n+n/8)
}

func (rd *reader) putBuf(b []byte) {
	if cap(b) == 0 {
		return // a chunk of a mapped file
	}
	select {
	case rd.bufs <- b:
	default:
	}
}

// run sends every chunk to out and closes it; it returns the first error.
func (rd *reader) run(ctx context.Context, out chan<- *chunk) error {
	defer close(out)
	seq := 0
	for fi, path := range rd.paths {
		if err := rd.file(ctx, fi, path, out, &seq); err != nil {
			return err
		}
	}
	return nil
}

func (rd *reader) file(ctx context.Context, fi int, path string, out chan<- *chunk, seq *int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if m := mapPlain(f); m != nil {
		rd.maps = append(rd.maps, m)
		return rd.mapped(ctx, fi, path, m, out, seq)
	}
	raw := bufio.NewReaderSize(countingReader{f, &rd.bytesRead}, 1<<20)
	var src io.Reader = raw
	magic, _ := raw.Peek(2)
	gz := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	if gz {
		z, err := gzip.NewReader(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		src = z
	}
	br := bufio.NewReaderSize(src, sniffSize)
	sniff, perr := br.Peek(sniffSize)
	if perr != nil && perr != io.EOF && !(gz && errors.Is(perr, io.ErrUnexpectedEOF)) && !errors.Is(perr, bufio.ErrBufferFull) {
		return fmt.Errorf("%s: %w", path, perr)
	}
	info, err := rd.detect(fi, path, sniff)
	if err != nil {
		return err
	}
	var carry []byte
	first := true
	for {
		target := int(rd.chunkBytes.Load())
		if target < len(carry)+int(minChunk) {
			target = len(carry) + int(minChunk)
		}
		select {
		case rd.tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		buf := rd.getBuf(target)
		buf = append(buf, carry...)
		n := len(buf)
		buf = buf[:target]
		var rerr error
		for n < target {
			k, err := br.Read(buf[n:])
			n += k
			if err != nil {
				rerr = err
				break
			}
		}
		buf = buf[:n]
		end := rerr != nil
		if end && rerr != io.EOF {
			if gz && errors.Is(rerr, io.ErrUnexpectedEOF) {
				rd.warnings = append(rd.warnings, fmt.Sprintf("%s: gzip stream is truncated (unexpected end of data); the lines before the cut were imported", path))
			} else {
				<-rd.tokens
				return fmt.Errorf("%s: %w", path, rerr)
			}
		}
		ck := &chunk{seq: *seq, buf: buf, format: info.format, nrCpus: info.nrCpus, file: fi, bytesRead: rd.bytesRead.Load()}
		if first {
			ck.headerLost = info.lost
			first = false
		}
		if end {
			ck.data, ck.lastOfFile, carry = buf, true, nil
		} else {
			cut := bytes.LastIndexByte(buf, '\n')
			if cut < 0 {
				cut = len(buf) - 1 // a line longer than a chunk: split it
			}
			ck.data = buf[:cut+1]
			carry = append(carry[:0:0], buf[cut+1:]...)
		}
		if err := emit(ctx, ck, out, seq); err != nil || end {
			return err
		}
	}
}

// detect finds file fi's format from its first bytes; every file must have the first's.
func (rd *reader) detect(fi int, path string, sniff []byte) (*fileInfo, error) {
	info, err := detect(path, sniff, rd.want)
	if err != nil {
		return nil, err
	}
	if fi > 0 && info.format != rd.infos[0].format {
		return nil, fmt.Errorf("%w: %s is %s but %s is %s; import files of one format together", ErrFormat, path, info.format, rd.paths[0], rd.infos[0].format)
	}
	rd.infos = append(rd.infos, info)
	return info, nil
}

// mapped cuts a mapped plain file into chunks the way file cuts what it reads (the
// same targets, cuts after the last newline, a longer line split), without copying.
func (rd *reader) mapped(ctx context.Context, fi int, path string, m []byte, out chan<- *chunk, seq *int) error {
	info, err := rd.detect(fi, path, m[:min(len(m), sniffSize)])
	if err != nil {
		return err
	}
	pos, covered := 0, 0 // next chunk's first byte; bytes handed out so far (cut or carried)
	for first := true; ; first = false {
		target := max(int(rd.chunkBytes.Load()), covered-pos+int(minChunk))
		select {
		case rd.tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		end := min(pos+target, len(m))
		rd.bytesRead.Add(int64(end - covered))
		covered = end
		ck := &chunk{seq: *seq, format: info.format, nrCpus: info.nrCpus, file: fi, bytesRead: rd.bytesRead.Load()}
		if first {
			ck.headerLost = info.lost
		}
		last := end == len(m)
		if last {
			ck.data, ck.lastOfFile = m[pos:], true
		} else {
			cut := bytes.LastIndexByte(m[pos:end], '\n')
			if cut < 0 {
				cut = end - pos - 1 // a line longer than a chunk: split it
			}
			ck.data = m[pos : pos+cut+1]
		}
		pos += len(ck.data)
		if err := emit(ctx, ck, out, seq); err != nil || last {
			return err
		}
	}
}

// emit numbers a cut chunk and hands it to the parsers. Its lines are counted by the
// parser that splits them (result.lines), not here: the consumer numbers them in order.
func emit(ctx context.Context, ck *chunk, out chan<- *chunk, seq *int) error {
	*seq++
	select {
	case out <- ck:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
