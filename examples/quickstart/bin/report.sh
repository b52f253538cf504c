#!/bin/sh
# report: prints a line for the operator and passes nothing on.
printf '%s\n' "report ($1): $(cat)" >&2
