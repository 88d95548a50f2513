// The form's Policy and Dtype say what their choices mean where they are chosen.
import { describe, expect, it } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { NewTopologyForm } from './NewTopologyForm';

describe('NewTopologyForm', () => {
  it('explains elastic and the bf16 rounding in place (issue 30 #16)', () => {
    const html = renderToStaticMarkup(<NewTopologyForm />);
    expect(html).toMatch(
      /<label title="[^"]*a round goes on without a rank declared dead instead of waiting[^"]*">Policy/,
    );
    expect(html).toMatch(/<label title="[^"]*rounded to nearest, ties to even[^"]*">Dtype/);
  });
});
