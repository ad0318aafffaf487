/** Five short notes, three about a violin: what pseudo-relevance feedback tests vote over. */
export const VIOLIN_NOTES: readonly string[] = [
  'I practise the violin every evening after work',
  'My violin teacher moved to Porto last spring',
  'The orchestra rehearses on Thursdays in the old church',
  'Bought new strings and rosin for the violin',
  'Dinner with Ana at the harbour on Friday',
];
