package tracefs

// arrow.go owns the Arrow IPC output of the binary decoders (tracefs-raw, tracedat):
// a Sink that fills schema.ArrowSchema record batches of schema.BatchRows rows.
//
// It exists because the text importer's column writer (internal/importer) is not
// exported; when it is, this sink should hand its rows to that writer instead.

import (
	"bufio"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"placemap/collectors/internal/schema"
)

// ArrowSink writes events as an Arrow IPC stream in schema.ArrowSchema.
type ArrowSink struct {
	bw   *bufio.Writer
	w    *ipc.Writer
	b    *array.RecordBuilder
	rows int
}

// NewArrowSink writes to w; call Close to flush the last batch and end the stream.
// opts add IPC writer options (e.g. ipc.WithZstd() for the live uplink).
func NewArrowSink(w io.Writer, opts ...ipc.Option) *ArrowSink {
	bw := bufio.NewWriterSize(w, 1<<20)
	return &ArrowSink{bw: bw, w: ipc.NewWriter(bw, append([]ipc.Option{ipc.WithSchema(schema.ArrowSchema)}, opts...)...),
		b: array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema)}
}

// Add appends one row: nullable columns are set for the kinds that define them.
func (s *ArrowSink) Add(ev *Event) error {
	b := s.b
	i32 := func(col int) *array.Int32Builder { return b.Field(col).(*array.Int32Builder) }
	str := func(col int) *array.StringBuilder { return b.Field(col).(*array.StringBuilder) }
	opt32 := func(col int, ok bool, v int32) {
		if ok {
			i32(col).Append(v)
		} else {
			i32(col).AppendNull()
		}
	}
	optStr := func(col int, ok bool, v string) {
		if ok {
			str(col).Append(v)
		} else {
			str(col).AppendNull()
		}
	}
	k := ev.Kind
	b.Field(schema.ColTsNs).(*array.Int64Builder).Append(ev.TsNs)
	i32(schema.ColCpu).Append(ev.CPU)
	b.Field(schema.ColKind).(*array.Uint8Builder).Append(uint8(k))
	i32(schema.ColCurPid).Append(ev.CurPid)
	i32(schema.ColTgid).AppendNull()
	i32(schema.ColPid).Append(ev.Pid)
	str(schema.ColComm).Append(ev.Comm)
	opt32(schema.ColPrio, ev.HasPrio, ev.Prio)
	opt32(schema.ColTargetCpu, ev.HasTarget, ev.TargetCPU)
	mig := k == schema.KindMigrate
	opt32(schema.ColOrigCpu, mig, ev.OrigCPU)
	opt32(schema.ColDestCpu, mig, ev.DestCPU)
	sw := k == schema.KindSwitch
	optStr(schema.ColPrevState, sw, ev.PrevState)
	opt32(schema.ColNextPid, sw, ev.NextPid)
	optStr(schema.ColNextComm, sw, ev.NextComm)
	opt32(schema.ColNextPrio, sw, ev.NextPrio)
	fork := k == schema.KindFork
	opt32(schema.ColChildPid, fork, ev.ChildPid)
	optStr(schema.ColChildComm, fork, ev.ChildComm)
	exec := k == schema.KindExec
	optStr(schema.ColFilename, exec, ev.Filename)
	opt32(schema.ColOldPid, exec, ev.OldPid)
	util := k == schema.KindLlcUtil
	opt32(schema.ColLlc, util, ev.LLC)
	if util {
		b.Field(schema.ColUtil).(*array.Float32Builder).Append(ev.Util)
	} else {
		b.Field(schema.ColUtil).(*array.Float32Builder).AppendNull()
	}
	lost := b.Field(schema.ColLostEvents).(*array.Int64Builder)
	if k == schema.KindLost && ev.LostEvents >= 0 {
		lost.Append(ev.LostEvents)
	} else {
		// A page flagged "missed events" without a stored count: the count is unknown.
		lost.AppendNull()
	}
	s.rows++
	if s.rows == schema.BatchRows {
		return s.flush()
	}
	return nil
}

func (s *ArrowSink) flush() error {
	if s.rows == 0 {
		return nil
	}
	rec := s.b.NewRecordBatch()
	defer rec.Release()
	s.rows = 0
	return s.w.Write(rec)
}

// Close writes the last batch and ends the stream.
func (s *ArrowSink) Close() error {
	defer s.b.Release()
	if err := s.flush(); err != nil {
		return err
	}
	if err := s.w.Close(); err != nil {
		return err
	}
	return s.bw.Flush()
}
