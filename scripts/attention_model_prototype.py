import json, math, heapq
d=json.load(open('calibrate/measurements/h200-reference.json'))
A=d['attention']; P=989.0; SM=132
def balance(a, bm, slots, order):
    nb=math.ceil(a['seq']/bm); works=[]
    for bh in range(a['b']*a['hq']):
        blocks=list(range(1,nb+1))
        if order=='desc': blocks.reverse()
        works+=blocks
    heap=[0]*(SM*slots)
    for w in works:
        t=heapq.heappop(heap); heapq.heappush(heap,t+w)
    return sum(works)/(SM*slots*max(heap))
F=lambda a: 2*a['b']*a['hq']*a['seq']**2*a['d']  # causal fwd flops
tf=lambda a: a['fwd_ms']*1e-3; tb=lambda a: (a['fwdbwd_ms']-a['fwd_ms'])*1e-3
def fitmodel(pts, bal, timef, flops_mult):
    best=None
    for e in [x/400 for x in range(80,400)]:
      for c in [0,128,256,384,512,768,1024,1536,2048,3072]:
        err=0
        for a in pts:
          eff=e*bal[id(a)]*(a['seq']/2)/(a['seq']/2+c)
          pred=flops_mult*F(a)/(eff*P*1e12)
          err+=(math.log(pred)-math.log(timef(a)))**2
        if best is None or err<best[0]: best=(err,e,c)
    return best[1:]
def pred(p,a,bal,mult):
    eff=p[0]*bal[id(a)]*(a['seq']/2)/(a['seq']/2+p[1]); return mult*F(a)/(eff*P*1e12)
fb={id(a):balance(a,128,2,'desc') for a in A}
for border in ['asc','desc']:
  for bslots in [1,2]:
    bb={id(a):balance(a,128,bslots,border) for a in A}
    ef=[];eb=[]
    for i,a in enumerate(A):
      rest=A[:i]+A[i+1:]
      pf=fitmodel(rest,fb,tf,1.0); pb=fitmodel(rest,bb,tb,2.5)
      t_f=pred(pf,a,fb,1.0); t_b=pred(pb,a,bb,2.5)
      ef.append(abs(t_f-tf(a))/tf(a)); eb.append(abs(t_f+t_b-(tf(a)+tb(a)))/(tf(a)+tb(a)))
    print(border,bslots,'fwd LOO %.1f%% fwdbwd LOO %.1f%%'%(100*sum(ef)/7,100*sum(eb)/7),['%.0f'%(100*x) for x in eb], fitmodel(A,fb,tf,1.0), fitmodel(A,bb,tb,2.5))
print('hybrid bwd residual')
bb={id(a):balance(a,128,1,'asc') for a in A}
for power in [1,2,4]:
  eb=[]
  for i,a in enumerate(A):
    rest=A[:i]+A[i+1:]
    pf=fitmodel(rest,fb,tf,1.0); pb=fitmodel(rest,bb,tb,2.5)
    num=den=0
    for o in rest:
      dd=(math.log(o['seq'])-math.log(a['seq']))**2+(math.log(o['b']*o['hq'])-math.log(a['b']*a['hq']))**2+(math.log(o['hq']/o['hkv'])-math.log(a['hq']/a['hkv']))**2
      w=1/(dd**(power/2)+1e-9); num+=w*math.log(tb(o)/pred(pb,o,bb,2.5)); den+=w
    t_f=pred(pf,a,fb,1.0); t_b=pred(pb,a,bb,2.5)*math.exp(num/den)
    eb.append(abs(t_f+t_b-(tf(a)+tb(a)))/(tf(a)+tb(a)))
  print(power,'fwdbwd LOO %.1f%%'%(100*sum(eb)/7),['%.0f'%(100*x) for x in eb])
