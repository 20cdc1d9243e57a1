package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// benchCmd is `sift bench`, the parent of every benchmark command
// (`sift bench match`, and others added by their own files).
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Run benchmarks: matching structures, networks, durable delivery",
	Long: `Bench groups Sift's macro benchmarks. Each subcommand runs one family of
structures or systems on a seeded, reproducible workload and writes a table
on stdout plus results.json, results.csv and PNG plots into --out.`,
	Args: cobra.NoArgs,
}

func init() { rootCmd.AddCommand(benchCmd) }

// benchParentCmd returns the `sift bench` command, so that each benchmark
// subcommand can add itself from its own file:
//
//	func init() { benchParentCmd().AddCommand(myCmd) }
func benchParentCmd() *cobra.Command { return benchCmd }

// benchReport is what every benchmark run hands back: a table for stdout,
// and results.json, results.csv and plots for its --out folder.
type benchReport interface {
	WriteTable(w io.Writer) error
	WriteFiles(dir string) error
}

// writeBenchReport prints rep's table on stdout, writes its files into
// dir and, unless quiet, says where on stderr.
func writeBenchReport(stdout, stderr io.Writer, rep benchReport, dir string, quiet bool) error {
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if err := rep.WriteFiles(dir); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(stderr, "wrote results.json, results.csv and plots to %s\n", dir)
	}
	return nil
}
