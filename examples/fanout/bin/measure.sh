#!/bin/sh
# measure: one element of the map; its item is one word.
word=$(sed -n 's/.*"item": *"\([^"]*\)".*/\1/p')
printf '{"word": "%s", "letters": %d}\n' "$word" "${#word}"
