package main

import (
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/router/certs"
	"github.com/spf13/cobra"
)

func init() {
	certsCmd := &cobra.Command{
		Use:   "certs",
		Short: "Manage a deployment's certificates",
	}
	certsCmd.AddCommand(certsInitCmd(), certsIssueCmd())
	rootCmd.AddCommand(certsCmd)
}

func certsInitCmd() *cobra.Command {
	var hosts []string
	var caOnly bool
	cmd := &cobra.Command{
		Use:   "init DIR [--host NAME ...] [--ca-only]",
		Short: "Write a CA (and development certificates) into DIR",
		Long: `Init writes a new deployment CA into DIR: ca.pem and ca-key.pem, from which
sift certs issue makes one certificate per router and per client. Keep DIR
with the operator: it holds the CA key.

Without --ca-only it also writes development certificates for one machine:
node.pem and node-key.pem, a router certificate valid for localhost,
127.0.0.1, ::1 and every --host that may link under any router name, and
client.pem and client-key.pem, a client certificate named sift-client. A
deployment across hosts issues per-router certificates instead, so that no
router can pose as another. Init refuses to overwrite existing files.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if caOnly {
				if len(hosts) > 0 {
					return errors.New("certs init: --host names the development router certificate; with --ca-only give hosts to sift certs issue --router")
				}
				if err := certs.InitCA(args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s, %s in %s\n", certs.CAFile, certs.CAKeyFile, args[0])
				return nil
			}
			if err := certs.Init(args[0], hosts); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s, %s, %s, %s, %s, %s in %s\n",
				certs.CAFile, certs.CAKeyFile, certs.NodeFile, certs.NodeKeyFile, certs.ClientFile, certs.ClientKeyFile, args[0])
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&hosts, "host", nil, "a DNS name or IP address for the development router certificate (repeatable)")
	cmd.Flags().BoolVar(&caOnly, "ca-only", false, "write only the CA (ca.pem, ca-key.pem), for sift certs issue")
	return cmd
}

func certsIssueCmd() *cobra.Command {
	var caDir, router, client, out string
	var hosts []string
	cmd := &cobra.Command{
		Use:   "issue --ca DIR (--router NAME [--host H ...] | --client NAME) --out OUT",
		Short: "Issue one router's or one client's certificate from the CA",
		Long: `Issue reads the CA in --ca (ca.pem and ca-key.pem, as written by sift certs
init) and writes into OUT a copy of ca.pem and:

  --router NAME: node.pem and node-key.pem, a router certificate naming router
    NAME, valid for localhost, 127.0.0.1, ::1 and every --host (DNS names or
    IP addresses the router is dialled at). siftd --name NAME --certs OUT.
  --client NAME: client.pem and client-key.pem, a client certificate naming
    client NAME (the name siftd --permissions looks up).

OUT never holds the CA key. Issue refuses to overwrite a certificate or key,
or to write into a folder holding another CA's ca.pem.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var id certs.Identity
			switch {
			case caDir == "" || out == "":
				return errors.New("certs issue: --ca and --out are required")
			case (router == "") == (client == ""):
				return errors.New("certs issue: give exactly one of --router NAME and --client NAME")
			case router != "":
				id = certs.Identity{Role: certs.Node, Name: router}
			default:
				if len(hosts) > 0 {
					return errors.New("certs issue: --host is for router certificates")
				}
				id = certs.Identity{Role: certs.Client, Name: client}
			}
			if err := certs.Issue(caDir, id, hosts, out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "issued a %s certificate in %s\n", id, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&caDir, "ca", "", "folder holding ca.pem and ca-key.pem")
	f.StringVar(&router, "router", "", "issue a router certificate for this router name")
	f.StringVar(&client, "client", "", "issue a client certificate for this client name")
	f.StringArrayVar(&hosts, "host", nil, "a DNS name or IP address the router is reached at (repeatable; routers only)")
	f.StringVar(&out, "out", "", "folder to write into")
	return cmd
}
