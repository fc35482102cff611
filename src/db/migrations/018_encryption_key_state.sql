-- Which encryption key the sealed columns are under (issue #21.7, #21.8): the current key's id,
-- and during a rotation the previous key's id until `chatgate admin rekey` has re-sealed
-- everything. Ids are public (an HMAC of the key): a process whose keys do not match refuses to start.
CREATE TABLE encryption_key_state (
  singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  current_key_id  text NOT NULL,
  previous_key_id text,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
