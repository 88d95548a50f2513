// A describe block's fold kernel: installed before its tests, the one before restored after.
import { afterAll, beforeAll } from 'vitest';
import { getFoldKernel, setFoldKernel, type FoldKernel } from '@shared/fold';

export function useFoldKernel(kernel: FoldKernel): void {
  let before = getFoldKernel();
  beforeAll(() => {
    before = getFoldKernel();
    setFoldKernel(kernel);
  });
  afterAll(() => setFoldKernel(before));
}
