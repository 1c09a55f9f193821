import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { StreamFollower, StreamTexts } from '../src/streams';

function recordingView() {
  const calls: string[] = [];
  return { calls, view: { append: (d: string) => calls.push(`+${d}`), replace: (t: string) => calls.push(`=${t}`) } };
}

describe('StreamTexts', () => {
  it('accumulates deltas per id and ignores text after done', () => {
    const streams = new StreamTexts();
    const seen: string[] = [];
    streams.subscribe((u) => seen.push(`${u.id}:${u.text}:${u.done}`));
    streams.accept({ id: 'a', delta: 'def ', done: false });
    streams.accept({ id: 'b', delta: 'x', done: false });
    streams.accept({ id: 'a', delta: 'f():', done: false });
    streams.accept({ id: 'a', delta: '\n', done: true });
    streams.accept({ id: 'a', delta: 'late', done: false });
    assert.equal(streams.text('a'), 'def f():\n');
    assert.equal(streams.isDone('a'), true);
    assert.equal(streams.text('b'), 'x');
    assert.equal(streams.isDone('b'), false);
    assert.deepEqual(seen, ['a:def :false', 'b:x:false', 'a:def f()::false', 'a:def f():\n:true']);
  });

  it('forgets the oldest finished streams beyond sixteen', () => {
    const streams = new StreamTexts();
    for (let i = 0; i < 20; i++) {
      streams.accept({ id: `s${i}`, delta: `${i}`, done: true });
    }
    assert.equal(streams.text('s3'), undefined);
    assert.equal(streams.text('s4'), '4');
    assert.equal(streams.text('s19'), '19');
  });

  it('stops notifying after unsubscribe', () => {
    const streams = new StreamTexts();
    let count = 0;
    const unsubscribe = streams.subscribe(() => count++);
    streams.accept({ id: 'a', delta: '1', done: false });
    unsubscribe();
    streams.accept({ id: 'a', delta: '2', done: false });
    assert.equal(count, 1);
  });
});

describe('StreamFollower', () => {
  it('adopts the first stream that moves and waits for its end', async () => {
    const streams = new StreamTexts();
    streams.accept({ id: 'before', delta: 'old', done: false });
    const { calls, view } = recordingView();
    const follower = new StreamFollower(streams, view);
    streams.accept({ id: 'r1', delta: 'x = ', done: false });
    streams.accept({ id: 'other', delta: 'noise', done: false });
    let finished = false;
    const done = follower.untilDone().then(() => (finished = true));
    streams.accept({ id: 'r1', delta: '1', done: false });
    await Promise.resolve();
    assert.equal(finished, false);
    streams.accept({ id: 'r1', delta: '', done: true });
    await done;
    assert.equal(follower.id, 'r1');
    assert.deepEqual(calls, ['+x = ', '+1']);
    follower.dispose();
  });

  it('switches to the stream the server names', async () => {
    const streams = new StreamTexts();
    const { calls, view } = recordingView();
    const follower = new StreamFollower(streams, view);
    streams.accept({ id: 'wrong', delta: 'a', done: false });
    streams.accept({ id: 'mine', delta: 'b', done: false });
    follower.bind('mine');
    streams.accept({ id: 'mine', delta: 'c', done: true });
    await follower.untilDone();
    assert.deepEqual(calls, ['+a', '=b', '+c']);
    follower.bind('mine');
    assert.deepEqual(calls, ['+a', '=b', '+c']);
  });

  it('is done at once when the named stream already finished, or when nothing streamed', async () => {
    const streams = new StreamTexts();
    const { calls, view } = recordingView();
    const idle = new StreamFollower(streams, view);
    await idle.untilDone();
    idle.dispose();
    const follower = new StreamFollower(streams, view);
    streams.accept({ id: 'r', delta: 'all', done: true });
    follower.bind('r');
    await follower.untilDone();
    assert.deepEqual(calls, ['+all']);
  });

  it('releases waiters on dispose', async () => {
    const streams = new StreamTexts();
    const follower = new StreamFollower(streams, recordingView().view);
    streams.accept({ id: 'r', delta: 'partial', done: false });
    const waiting = follower.untilDone();
    follower.dispose();
    await waiting;
    streams.accept({ id: 'r', delta: 'more', done: false });
    assert.equal(follower.id, 'r');
  });
});
