#!/bin/sh
# Creates the namespace the service uses, once the Temporal server answers (the `temporal-namespace` job).
set -eu
until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do sleep 2; done
temporal operator namespace describe -n "$TEMPORAL_NAMESPACE" --address "$TEMPORAL_ADDRESS" \
  || temporal operator namespace create -n "$TEMPORAL_NAMESPACE" --retention 30d --address "$TEMPORAL_ADDRESS"
