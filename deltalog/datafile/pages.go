package datafile

import (
	"io"

	"github.com/parquet-go/parquet-go"
)

// eachValues calls fn with the values of every page of pages, a buffer (buf)
// at a time, while the page that holds their bytes is live: a page's buffers
// are recycled once it is released, so fn must copy what it keeps. It closes
// pages. Values read before a page's error still reach fn.
func eachValues(pages parquet.Pages, buf []parquet.Value, fn func([]parquet.Value) error) error {
	defer pages.Close()
	for {
		page, err := pages.ReadPage()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		err = pageValues(page, buf, fn)
		parquet.Release(page)
		if err != nil {
			return err
		}
	}
}

func pageValues(page parquet.Page, buf []parquet.Value, fn func([]parquet.Value) error) error {
	vr := page.Values()
	for {
		n, err := vr.ReadValues(buf)
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
