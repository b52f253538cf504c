#!/bin/sh
# square: one element of a range; its item is an integer.
i=$(sed -n 's/.*"item": *\([0-9-]*\).*/\1/p')
echo "{\"n\": $i, \"square\": $((i * i))}"
