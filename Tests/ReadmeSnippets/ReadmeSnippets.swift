// The Swift blocks of README.md and of the DocC articles, one file per document, are written
// into Generated/ beside this file by scripts/extract-readme-snippets.sh (which `make test`
// runs), so that building the package compiles them: the documents cannot drift from the API.
// This file keeps the target's sources from being empty before the script has run.
