package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrOutputFormat means the output's extension names no supported format.
var ErrOutputFormat = errors.New("unsupported chart format")

// Output formats, chosen by the output file's extension.
const (
	formatSVG = "svg"
	formatPNG = "png"
	// pngDPI renders PNGs at twice the 72 points per inch of the layout, so
	// they stay sharp on high-density screens.
	pngDPI = 144
)

// formatOf returns the format the output path's extension names.
func formatOf(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return formatSVG, nil
	case ".png":
		return formatPNG, nil
	}
	return "", fmt.Errorf("%s: %w: the name must end in .svg or .png", path, ErrOutputFormat)
}

// encode draws ch in format and returns the file's content.
func encode(ch *chart, format string) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case formatSVG:
		c := vgsvg.New(ch.width, ch.height)
		ch.draw(c)
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("encode SVG: %w", err)
		}
		return svgFontFallback(buf.Bytes()), nil
	case formatPNG:
		c := vgimg.NewWith(vgimg.UseWH(ch.width, ch.height), vgimg.UseDPI(pngDPI))
		ch.draw(c)
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("encode PNG: %w", err)
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("%w %q", ErrOutputFormat, format)
}

// svgFontFallback lets viewers without Liberation Sans use a font of the
// same metrics (Arial, Helvetica) or any sans-serif font instead of their
// default serif one. The SVG does not embed the font, which would add about
// 400 kB.
func svgFontFallback(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
}

// writeFile replaces path with data, creating its directory: a reader
// never sees half a chart.
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
