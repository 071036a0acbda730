/* SPDX-License-Identifier: MIT */
/*
 * umsi - command-line front end: `umsi sim` runs the library on a simulated
 * machine, `umsi inspect` decodes MSI/MSI-X state of this machine or a dump.
 */
#include <stdio.h>
#include <string.h>

int umsi_cmd_inspect(int argc, char **argv);
int umsi_cmd_sim(int argc, char **argv);

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "sim", umsi_cmd_sim, "run uMSI on a simulated machine" },
	{ "inspect", umsi_cmd_inspect,
	  "decode MSI/MSI-X state of this machine or an lspci dump" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: umsi COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n`umsi COMMAND --help` describes each command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "umsi: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
